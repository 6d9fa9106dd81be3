#include "a/a.h"

int a_own(void)
{
    return 1;
}
