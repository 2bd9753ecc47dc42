/* Tensor-times-matrix chain: D = A x_2 B x_3 C for an order-3 tensor A. */
#define I 8
#define J 8
#define K 8
#define L 8
#define M 8

void kernel_ttmc(float A[I][L][M], float B[L][J], float C[M][K], float D[I][J][K]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          for (int m = 0; m < M; m++)
            D[i][j][k] += A[i][l][m] * B[l][j] * C[m][k];
#pragma endscop
}
