/* PolyBench/C 4.2 doitgen in its own form, written for odyssey: A[r][q][:] := A[r][q][:] C4.
 * The temporary sum[p] is reused for every (r, q) and copied back into A in place: odyssey
 * rejects it; doitgen_oop.c is the out-of-place form it maps. */
#define NR 16
#define NQ 16
#define NP 16

void kernel_doitgen(float A[NR][NQ][NP], float C4[NP][NP], float sum[NP]) {
#pragma scop
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++) {
      for (int p = 0; p < NP; p++) {
        sum[p] = 0;
        for (int s = 0; s < NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (int p = 0; p < NP; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}
