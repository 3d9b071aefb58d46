int tf_placeholder_test_common(void);
int main(void){return 0;}
