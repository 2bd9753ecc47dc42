/* doitgen out of place (written for odyssey): the temporary expanded into the result array,
 * Out[r][q][p] = sum_s A[r][q][s] * C4[s][p]. */
#define NR 16
#define NQ 16
#define NP 16

void kernel_doitgen_oop(float A[NR][NQ][NP], float C4[NP][NP], float Out[NR][NQ][NP]) {
#pragma scop
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++)
      for (int p = 0; p < NP; p++) {
        Out[r][q][p] = 0;
        for (int s = 0; s < NP; s++)
          Out[r][q][p] += A[r][q][s] * C4[s][p];
      }
#pragma endscop
}
