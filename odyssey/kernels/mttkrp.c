/* Matricized tensor times Khatri-Rao product: D = A_(1) (C kr B), order-3 tensor A. */
#define I 16
#define J 16
#define K 16
#define L 16

void kernel_mttkrp(float A[I][K][L], float B[K][J], float C[L][J], float D[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++)
      for (int k = 0; k < K; k++)
        for (int l = 0; l < L; l++)
          D[i][j] += A[i][k][l] * B[k][j] * C[l][j];
#pragma endscop
}
