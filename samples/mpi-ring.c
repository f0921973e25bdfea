/* mpi-ring.c: the MPI sample (samples/mpi-ring.md). Every rank passes a token
 * once around a ring, then all sum their ranks with MPI_Allreduce.  Which MPI
 * call costs each rank the most heap, and how does it grow with the ranks?
 *
 *   cc-memwrap mpicc -O1 samples/mpi-ring.c -o ring
 *   mpiexec -n 4 ./ring
 *   cc-memwrap report ring.*.mwtrace --by entry
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int rank, size, token = 0, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *payload = malloc(1024 * sizeof *payload); /* the program's own 4 KiB */
  for (int i = 0; i < 1024; i++) payload[i] = rank + i;
  if (size > 1) {
    if (rank == 0) {
      token = 1;
      MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token++;
      MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  free(payload);
  if (rank == 0) printf("%d ranks: token %d, sum of ranks %d\n", size, token, sum);
  MPI_Finalize();
  return 0;
}
