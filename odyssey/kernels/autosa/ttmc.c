/* TTMc as AutoSA's large U250 design computes it (UCLA-VAST/AutoSA
 * autosa_tests/large/ttmc/kernel.c: D starts from 0, C is indexed C[k][m]). */
#define I 16
#define J 16
#define K 16
#define L 16
#define M 16

void kernel_ttmc(float A[I][L][M], float B[L][J], float C[K][M], float D[I][J][K]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        D[i][j][k] = 0;
        for (int l = 0; l < L; l++)
          for (int m = 0; m < M; m++)
            D[i][j][k] += A[i][l][m] * B[l][j] * C[k][m];
      }
#pragma endscop
}
