int tf_placeholder_test_util(void);
