#include "a/a.h"

int a_tested(void)
{
    return a_own();
}
