/* mid.c calls low.c, and low.c calls back into mid.c: a cycle of two files */
int low_work(int x);
int mid_helper(int x) { return x * 2; }
int mid_work(int x) { return low_work(x) - 1; }
