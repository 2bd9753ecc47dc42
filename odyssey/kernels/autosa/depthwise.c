/* Depth-wise convolution in AutoSA's DNN-operator layout (channels last), written for
 * odyssey: cout[r][c][o] = sum_{p,q} cin[r+p][c+q][o] * wt[p][q][o]. */
#define O 16
#define R 8
#define C 8
#define K 3

void kernel_depthwise(float cin[R + K - 1][C + K - 1][O], float wt[K][K][O], float cout[R][C][O]) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) {
        cout[r][c][o] = 0;
        for (int p = 0; p < K; p++)
          for (int q = 0; q < K; q++)
            cout[r][c][o] = cout[r][c][o] + cin[r + p][c + q][o] * wt[p][q][o];
      }
#pragma endscop
}
