// names.rs: Rust names for gprobe's tests of demangled names: a function
// whose closure puts a DWARF namespace of the same name beside it (work),
// one method name implemented three times (size), a method of a type in a
// module, a generic function, and an unmangled extern "C" function.
// Run as: names [N]: work is called N times (default 1).
use std::hint::black_box;

trait Shape {
    fn size(&self) -> u64;
}

struct Square {
    side: u64,
}
struct Circle {
    r: u64,
}
struct Tri {
    a: u64,
    b: u64,
}

impl Shape for Square {
    fn size(&self) -> u64 {
        self.side * self.side
    }
}
impl Shape for Circle {
    fn size(&self) -> u64 {
        3 * self.r * self.r
    }
}
impl Shape for Tri {
    fn size(&self) -> u64 {
        self.a * self.b / 2
    }
}

mod inner {
    pub struct Counter {
        pub n: u64,
    }
    impl Counter {
        #[inline(never)]
        pub fn bump(&mut self, by: u64) -> u64 {
            self.n += by;
            self.n
        }
    }
    #[inline(never)]
    pub fn generic<T: Copy + Into<u64>>(v: T) -> u64 {
        v.into() + 1
    }
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn plain_c(x: u64) -> u64 {
    x * 3
}

#[inline(never)]
fn work(n: u64) -> u64 {
    let add = |x: u64| x + n;
    let shapes: Vec<Box<dyn Shape>> = vec![
        Box::new(Square { side: n }),
        Box::new(Circle { r: n }),
        Box::new(Tri { a: n, b: 2 }),
    ];
    let mut total = 0;
    for s in &shapes {
        total += add(s.size());
    }
    total
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut c = inner::Counter { n: 0 };
    let mut t = 0;
    for i in 0..black_box(n) {
        t += work(black_box(i));
        t += c.bump(i);
        t += inner::generic(i as u32) + inner::generic(i as u8);
        t += plain_c(i);
    }
    println!("{}", t);
}
