/* placeholder: written by the bloom test helper */
int main(void) { return 0; }
