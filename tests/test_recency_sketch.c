int tf_placeholder_test_recency_sketch(void);
int main(void){return 0;}
