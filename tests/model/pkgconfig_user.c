/* A user's program: only the installed header and library. */
#include <stdio.h>
#include <ulysim.h>

int main(void)
{
    int64_t v = 0;
    if (uly_size_parse("1M", &v, NULL, 0) != ULY_OK) return 1;
    printf("ok %lld %s\n", (long long)v, uly_strategy_get(ULY_STRAT_USP)->name);
    return 0;
}
