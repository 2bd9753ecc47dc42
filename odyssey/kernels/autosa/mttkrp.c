/* MTTKRP as AutoSA's large U250 design computes it, loop nest unmodified (UCLA-VAST/AutoSA
 * autosa_tests/large/mttkrp/kernel.c: D starts from 0, C is indexed C[j][l], k before l).
 * That design puts its SIMD lanes along l (simd [8,1]): odyssey's design `ij-ij.kl@l`;
 * without `@l` the lanes go along k, the first of the two equal reduction loops. */
#define I 16
#define J 16
#define K 16
#define L 16

void kernel_mttkrp(float A[I][K][L], float B[K][J], float C[J][L], float D[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      D[i][j] = 0;
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          D[i][j] = D[i][j] + A[i][k][l] * B[k][j] * C[j][l];
    }
#pragma endscop
}
