//! The range coder and adaptive frequency models that CRAM 3.1's arithmetic coder, fqzcomp
//! and (through the arithmetic coder) the name tokeniser share (CRAMcodecs section 4, as
//! htscodecs' c_range_coder.h and c_simple_model.h define them). Decoding must follow the
//! encoder's model updates exactly, so every constant and rounding here is the encoder's.

/// The range is renormalised (another byte read) whenever it falls below this.
const TOP: u32 = 1 << 24;
/// A model's total frequency is halved once it passes this.
const MAX_FREQ: u32 = (1 << 16) - 17;
/// Each decoded symbol's frequency grows by this.
const STEP: u16 = 16;

/// The decoding side of the range coder over one byte stream.
pub(super) struct RangeDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    range: u32,
    code: u32,
}

impl<'a> RangeDecoder<'a> {
    /// Starts decoding: the first five bytes prime the code. A stream shorter than that can
    /// still decode symbols that never need a byte, as htscodecs allows; any read is an error.
    pub(super) fn new(data: &'a [u8]) -> Self {
        let mut d = RangeDecoder {
            data,
            pos: data.len(),
            range: u32::MAX,
            code: 0,
        };
        if data.len() >= 5 {
            d.code = data[1..5]
                .iter()
                .fold(0u32, |c, &b| (c << 8) | u32::from(b));
            d.pos = 5;
        }
        d
    }

    /// The position of the code within `total`, narrowing the range to one unit of it.
    fn freq(&mut self, total: u32) -> u32 {
        // The range never falls below TOP, and totals stay below 1 << 16.
        self.range /= total;
        self.code / self.range
    }

    /// Takes the symbol at `[cum, cum + freq)` out of the code and renormalises.
    fn take(&mut self, cum: u32, freq: u32) -> Result<(), String> {
        self.code = self.code.wrapping_sub(cum.wrapping_mul(self.range));
        self.range = self.range.wrapping_mul(freq);
        while self.range < TOP {
            let b = *self
                .data
                .get(self.pos)
                .ok_or_else(|| format!("range coder runs past its {} bytes", self.data.len()))?;
            self.pos += 1;
            self.code = (self.code << 8) | u32::from(b);
            self.range <<= 8;
        }
        Ok(())
    }
}

/// An adaptive model of `n` symbols (0..n), each starting at frequency 1. Entries are kept
/// roughly in descending frequency by one swap per decode, as the encoder keeps them; only
/// the `n` live symbols are stored (the encoder's zero-frequency tail can never be decoded).
#[derive(Clone)]
pub(super) struct Model {
    total: u32,
    /// (frequency, symbol) in the encoder's search order.
    entries: Vec<(u16, u16)>,
}

impl Model {
    pub(super) fn new(n: usize) -> Self {
        Model {
            total: n as u32,
            entries: (0..n as u16).map(|s| (1, s)).collect(),
        }
    }

    /// Decodes one symbol and updates the model as the encoder did after coding it.
    pub(super) fn decode(&mut self, rc: &mut RangeDecoder<'_>) -> Result<u16, String> {
        let target = rc.freq(self.total);
        let mut cum = 0u32;
        let mut i = 0;
        loop {
            let f = u32::from(
                self.entries
                    .get(i)
                    .ok_or_else(|| "range coder value outside its model".to_string())?
                    .0,
            );
            if cum + f > target {
                break;
            }
            cum += f;
            i += 1;
        }
        let (f, sym) = self.entries[i];
        rc.take(cum, u32::from(f))?;
        self.entries[i].0 += STEP;
        self.total += u32::from(STEP);
        if self.total > MAX_FREQ {
            self.total = 0;
            for e in &mut self.entries {
                e.0 -= e.0 >> 1;
                self.total += u32::from(e.0);
            }
        }
        if i > 0 && self.entries[i].0 > self.entries[i - 1].0 {
            self.entries.swap(i, i - 1);
        }
        Ok(sym)
    }
}

/// Models made only when a context is first met, so a stream pays for the contexts it uses
/// (each decoded symbol meets at most one new one) rather than for every possible context.
pub(super) struct Contexts {
    slot: Vec<u32>,
    models: Vec<Model>,
    symbols: usize,
}

impl Contexts {
    /// `contexts` possible contexts of models over `symbols` symbols.
    pub(super) fn new(contexts: usize, symbols: usize) -> Self {
        Contexts {
            slot: vec![u32::MAX; contexts],
            models: Vec::new(),
            symbols,
        }
    }

    /// Decodes one symbol with the model of context `ctx`.
    pub(super) fn decode(&mut self, ctx: usize, rc: &mut RangeDecoder<'_>) -> Result<u16, String> {
        let slot = self
            .slot
            .get_mut(ctx)
            .ok_or_else(|| format!("model context {ctx} out of range"))?;
        if *slot == u32::MAX {
            *slot = self.models.len() as u32;
            self.models.push(Model::new(self.symbols));
        }
        self.models[*slot as usize].decode(rc)
    }
}

#[cfg(test)]
mod tests {
    use super::{Model, RangeDecoder};

    #[test]
    fn a_model_of_one_symbol_needs_no_bytes_and_a_short_stream_errs_when_read() {
        // One symbol: the range never shrinks, so nothing is read.
        let mut rc = RangeDecoder::new(&[]);
        let mut m = Model::new(1);
        for _ in 0..100 {
            assert_eq!(m.decode(&mut rc).unwrap(), 0);
        }
        // 256 symbols: the first decode shrinks the range below TOP and needs a byte.
        let mut rc = RangeDecoder::new(&[0, 0, 0]);
        assert!(Model::new(256).decode(&mut rc).is_err());
    }

    #[test]
    fn code_zero_decodes_the_first_entry_and_the_model_adapts() {
        // All-zero code: always the first entry in search order. After symbol 0 gains
        // frequency it stays first.
        let data = [0u8; 64];
        let mut rc = RangeDecoder::new(&data);
        let mut m = Model::new(4);
        for _ in 0..20 {
            assert_eq!(m.decode(&mut rc).unwrap(), 0);
        }
        assert_eq!(m.entries[0], (1 + 20 * 16, 0));
        // A code past every entry is an error, not a symbol.
        let mut rc = RangeDecoder::new(&[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert!(Model::new(2).decode(&mut rc).is_err());
    }
}
