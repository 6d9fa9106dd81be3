// A user kernel for the LaunchKernel validation: out = 2 * in. hir passes the inputs' data
// pointers, then the outputs', then the element count of the first output.
extern "C" __global__ void kernel(const float *in, float *out, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2.0f * in[i];
}
