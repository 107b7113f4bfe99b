// Reads "p KEY" / "d KEY" lines; after each "=" line prints the keys in bucket order.
#include <stdio.h>
#include <stdint.h>
#include "htslib/khash.h"
KHASH_MAP_INIT_INT(bin, int)
int main(void) {
    kh_bin_t *h = kh_init(bin);
    char op; unsigned key; int ret;
    while (scanf(" %c", &op) == 1) {
        if (op == '=') {
            for (khint_t k = kh_begin(h); k != kh_end(h); ++k)
                if (kh_exist(h, k)) printf("%u:%u ", k, kh_key(h, k));
            printf("\n");
            continue;
        }
        if (scanf("%u", &key) != 1) return 1;
        if (op == 'p') kh_put(bin, h, key, &ret);
        else { khint_t k = kh_get(bin, h, key); kh_del(bin, h, k); }
    }
    return 0;
}
