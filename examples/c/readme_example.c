#include <leaky/leaky.h>
#include <stdio.h>

int main(void) {
  float x[5] = {-2.0f, -0.5f, 0.0f, 1.0f, 3.0f}, y[5], dx[5];
  float dy[5] = {1, 1, 1, 1, 1};
  leaky_status s = leaky_relu_forward(LEAKY_F32, 5, x, y, 0.2, NULL);
  if (s == LEAKY_OK) s = leaky_relu_backward(LEAKY_F32, 5, dy, x, 0, dx, 0.2, NULL);
  if (s != LEAKY_OK) { fprintf(stderr, "%s\n", leaky_last_error()); return 1; }
  for (int i = 0; i < 5; ++i) printf("%g -> %g (grad %g)\n", x[i], y[i], dx[i]);
  return 0;
}
