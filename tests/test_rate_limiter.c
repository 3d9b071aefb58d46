/* placeholder: written by the rate limiter test helper */
int main(void) { return 0; }
