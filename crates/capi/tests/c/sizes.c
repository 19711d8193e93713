/* The size of each struct of quietstat.h, one `<ABI> <struct> <bytes>`
 * line each, for tests/symbols.rs. */
#include <stdio.h>

#include "quietstat.h"

int main(void) {
    printf("%d qs_options %zu\n", QS_ABI_VERSION, sizeof(struct qs_options));
    printf("%d qs_proc %zu\n", QS_ABI_VERSION, sizeof(struct qs_proc));
    return 0;
}
