pub struct Counter {
    n: u32,
}

impl Counter {
    pub fn bump(&mut self) {
        self.n += 1;
    }
}

pub fn zero() -> u32 {
    0
}
