/* Tensor times matrix (mode 3), the form of AutoSA's test corpus, written for odyssey:
 * C[i][j][k] = sum_l A[i][j][l] * B[k][l]. */
#define I 16
#define J 16
#define K 16
#define L 16

void kernel_ttm(float A[I][J][L], float B[K][L], float C[I][J][K]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++) {
        C[i][j][k] = 0;
        for (int l = 0; l < L; l++)
          C[i][j][k] = C[i][j][k] + A[i][j][l] * B[k][l];
      }
#pragma endscop
}
