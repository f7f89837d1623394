/* A program whose source is served by debuginfod, not found on disk: its
 * DWARF names it /usr/src/gprobe-demo/testdata/debuginfod/demo.c. */
int twice(int x)
{
	int y = 2 * x;

	return y;
}

int main(void)
{
	return twice(1) - 2;
}
