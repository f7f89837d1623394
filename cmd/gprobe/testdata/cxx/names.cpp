// names.cpp: C++ names for gprobe's tests of demangled names (-F, probe
// points by qualified name, overloads, methods of a class and a struct).
// Run as: names [N]: each function is called N times (default 1).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ns {

struct Point {
	int x, y;
	int sum() const { return x + y; }
};

class Klass {
public:
	explicit Klass(int f) : field(f), name("klass") {}
	virtual ~Klass() {}
	int method(int a);
	int method(const char *s);
	static int smethod(int v);
	int scale(Point *p);
	bool operator<(const Klass &o) const { return field < o.field; }

	int field;
	std::string name;
};

__attribute__((noinline)) int Klass::method(int a) { return field + a; }
__attribute__((noinline)) int Klass::method(const char *s) { return field + s[0]; }
__attribute__((noinline)) int Klass::smethod(int v) { return v * 2; }

__attribute__((noinline)) int Klass::scale(Point *p)
{
	int r = p->x * field;
	r += this->field * p->y;
	return r;
}

template <typename T> __attribute__((noinline)) T tadd(T a, T b) { return a + b; }

namespace {
__attribute__((noinline)) int hidden(int x) { return x ^ 0x5a; }
}

} // namespace ns

static __attribute__((noinline)) int helper(int x) { return x + 1; }

extern "C" __attribute__((noinline)) int cfunc(int x) { return x * 3; }

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	ns::Klass k(argc), other(2);
	ns::Point p = {argc, 3};
	std::vector<int> v{1, 2, 3};
	auto lambda = [&](int i) { return i + k.field; };
	long total = 0;
	for (int i = 0; i < n; i++) {
		total += k.method(i) + k.method("x") + ns::Klass::smethod(i);
		total += ns::tadd<int>(i, 2) + (long)ns::tadd<double>(1.5, i);
		total += k.scale(&p) + p.sum() + ns::hidden(i) + helper(i) + cfunc(i);
		total += lambda(i) + (k < other) + (long)v.size();
	}
	std::printf("%ld %s\n", total, k.name.c_str());
	return 0;
}
