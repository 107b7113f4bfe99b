/* Prints the chunks htslib's hts_itr_query chooses, for tests/data/chunks.tsv.
 *
 * Build against the system htslib 1.16 (headers from the htslib 1.16 source tree):
 *   cc -O1 -I HTSLIB_1_16_SRC -o oracle oracle.c -l:libhts.so.3
 * Input lines:  INDEX<TAB>TID<TAB>BEG<TAB>END   (TID -2 = HTS_IDX_NOCOOR, i.e. region '*')
 * Output lines: the input, then <TAB>null, or <TAB>u:v,u:v,... (raw virtual offsets; for
 * TID -2 the single start offset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include "htslib/hts.h"
#include "htslib/hts_log.h"

int main(void) {
    char line[4096], cur[4096] = "";
    hts_idx_t *idx = NULL;
    hts_verbose = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char path[4096];
        int tid;
        long long beg, end;
        if (sscanf(line, "%4095[^\t]\t%d\t%lld\t%lld", path, &tid, &beg, &end) != 4) return 2;
        if (strcmp(path, cur) != 0) {
            if (idx) hts_idx_destroy(idx);
            idx = hts_idx_load2("/dev/null", path);
            strcpy(cur, path);
        }
        printf("%s\t", line);
        if (!idx) { printf("loadfail\n"); continue; }
        hts_itr_t *it = hts_itr_query(idx, tid, beg, end, NULL);
        if (!it) { printf("null\n"); continue; }
        if (tid < 0) {
            printf("%" PRIu64 "\n", it->curr_off);
        } else {
            for (int i = 0; i < it->n_off; i++)
                printf("%s%" PRIu64 ":%" PRIu64, i ? "," : "", it->off[i].u, it->off[i].v);
            printf("\n");
        }
        fflush(stdout);
        hts_itr_destroy(it);
    }
    return 0;
}
