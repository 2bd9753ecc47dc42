/* A fully-connected layer in the form of AutoSA's DNN-operator test, written for odyssey:
 * cout[i] = sum_j cin[i][j] * wt[j]. */
#define I 64
#define J 64

void kernel_fc(float cin[I][J], float wt[J], float cout[I]) {
#pragma scop
  for (int i = 0; i < I; i++) {
    cout[i] = 0;
    for (int j = 0; j < J; j++)
      cout[i] = cout[i] + cin[i][j] * wt[j];
  }
#pragma endscop
}
