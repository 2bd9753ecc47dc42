/* MTTKRP as AutoSA's large U250 design computes it (UCLA-VAST/AutoSA
 * autosa_tests/large/mttkrp/kernel.c: D starts from 0, C is indexed C[j][l]), with the l loop
 * before k, so that odyssey's SIMD loop (the first reduction loop) is l, as in that design
 * (its k tile is 2, its SIMD factor 8). */
#define I 16
#define J 16
#define K 16
#define L 16

void kernel_mttkrp_lk(float A[I][K][L], float B[K][J], float C[J][L], float D[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      D[i][j] = 0;
      for (int l = 0; l < L; l++)
        for (int k = 0; k < K; k++)
          D[i][j] += A[i][k][l] * B[k][j] * C[j][l];
    }
#pragma endscop
}
