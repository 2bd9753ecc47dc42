/* LU decomposition (no pivoting) in a uniformized form, written for odyssey after the form of
 * AutoSA's test corpus: every value a PE needs travels to it from a neighbour (U along j, L
 * along i, the updated matrix along k), through local arrays declared inside the scop, with
 * guards on k == 0, j == k and i == k. The dependences are uniform, but it is a system of
 * several statements computing several arrays: odyssey maps one statement per scop and
 * rejects it with that reason (AutoSA maps such systems). */
#define N 16

void kernel_lu_uniform(float A[N][N], float L[N][N], float U[N][N]) {
#pragma scop
  float V_in[N][N][N];
  float V_out[N][N][N];
  float U_p[N][N][N];
  float L_p[N][N][N];
  for (int k = 0; k < N; k++)
    for (int j = k; j < N; j++)
      for (int i = k; i < N; i++) {
        if (k == 0)
          V_in[i][j][k] = A[i][j];
        else
          V_in[i][j][k] = V_out[i][j][k - 1];
        if (j == k) {
          U_p[i][j][k] = V_in[i][j][k];
          U[i][j] = U_p[i][j][k];
        } else {
          U_p[i][j][k] = U_p[i][j - 1][k];
          if (i == k) {
            L_p[i][j][k] = V_in[i][j][k] / U_p[i][j][k];
            L[i][j] = L_p[i][j][k];
          } else {
            L_p[i][j][k] = L_p[i - 1][j][k];
          }
          V_out[i][j][k] = V_in[i][j][k] - L_p[i][j][k] * U_p[i][j][k];
        }
      }
#pragma endscop
}
