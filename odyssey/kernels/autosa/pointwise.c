/* A convolution layer in AutoSA's DNN-operator layout (channels last), written for odyssey:
 * cout[r][c][o] = sum_{i,p,q} cin[r+p][c+q][i] * wt[o][p][q][i]. With K = 1 it is the
 * point-wise (1x1) convolution of MobileNet; override with -D K=3 for a 3x3 layer. */
#define O 16
#define I 16
#define R 8
#define C 8
#define K 1

void kernel_pointwise(float cin[R + K - 1][C + K - 1][I], float wt[O][K][K][I], float cout[R][C][O]) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) {
        cout[r][c][o] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < K; p++)
            for (int q = 0; q < K; q++)
              cout[r][c][o] = cout[r][c][o] + cin[r + p][c + q][i] * wt[o][p][q][i];
      }
#pragma endscop
}
