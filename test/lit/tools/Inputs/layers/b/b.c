#include "a/a.h"

static int a_static_helper(void) { return 2; }

int a_in_b(int x)
{
    return x + a_static_helper();
}

int a_fn(int x) { return x; }
int a_data = 1;
int a_hook(int x) { return x; }
int (a_macro)(int x) { return x; }
int a_commented(void) { return 0; }
int a_dead(void) { return 0; }
int a_live(void) { return 0; }
