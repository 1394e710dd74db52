//! A string interner: each distinct string is stored once and named by a
//! 4-byte [`Sym`].

use rustc_hash::FxHashMap;

/// An interned string's handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(u32);

/// Stores each distinct string once.
#[derive(Debug, Default)]
pub struct Interner {
    map: FxHashMap<Box<str>, Sym>,
    strings: Vec<Box<str>>,
    bytes: usize,
}

impl Interner {
    /// The handle of `s`, interning it on first sight.
    pub fn intern(&mut self, s: &str) -> Sym {
        if let Some(&sym) = self.map.get(s) {
            return sym;
        }
        let sym = Sym(u32::try_from(self.strings.len()).unwrap_or(u32::MAX));
        let boxed: Box<str> = s.into();
        self.bytes += 2 * boxed.len();
        self.strings.push(boxed.clone());
        self.map.insert(boxed, sym);
        sym
    }

    /// The handle of `s` if it was interned.
    pub fn get(&self, s: &str) -> Option<Sym> {
        self.map.get(s).copied()
    }

    /// The string behind a handle.
    pub fn resolve(&self, sym: Sym) -> &str {
        self.strings.get(sym.0 as usize).map_or("", |s| s)
    }

    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.bytes + self.strings.capacity() * 16 + self.map.capacity() * 24
    }
}
