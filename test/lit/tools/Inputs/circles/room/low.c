/* low.c should call nothing above it, but uses mid_helper */
int mid_helper(int x);
int low_work(int x) { return mid_helper(x) + 3; }
