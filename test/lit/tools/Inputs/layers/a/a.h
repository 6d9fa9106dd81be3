/* a.h: module a's interface. Two of its prototypes are defined by module b (the hidden edges
 * the test expects); every other name here is one that b defines too without it being one. */
#ifndef A_H
#define A_H

#ifdef __cplusplus
extern "C" {
#endif

int a_own(void);                     /* defined in a: no finding */
int a_in_b(int x);                   /* defined in b: hidden */
static inline int a_inline(void) { return 0; }
typedef int (*a_fn)(int);            /* a function-pointer type */
extern int a_data;                   /* data */
extern int (*a_hook)(int);           /* a function pointer */
#define a_macro(x) ((x) + 1)
int a_tested(void);                  /* defined only by a test */
/* int a_commented(void); */
#if 0
int a_dead(void);
#else
int a_live(void);                    /* defined in b: hidden */
#endif
#ifdef __cplusplus
}
#endif

#endif
