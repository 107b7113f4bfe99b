//! Tests of aux field parsing and formatting.

use super::*;

fn g(d: f64) -> String {
    let mut v = Vec::new();
    push_printf_g(&mut v, d);
    String::from_utf8(v).unwrap()
}

fn k(d: f64) -> String {
    let mut v = Vec::new();
    push_kputd(&mut v, d);
    String::from_utf8(v).unwrap()
}

fn fmt(aux: &[u8]) -> Result<String, usize> {
    let mut v = Vec::new();
    format(aux, &mut v).map(|()| String::from_utf8(v).unwrap())
}

#[test]
fn printf_g() {
    assert_eq!(g(0.0), "0");
    assert_eq!(g(-0.0), "-0");
    assert_eq!(g(1.0), "1");
    assert_eq!(g(-1.5), "-1.5");
    assert_eq!(g(100000.0), "100000");
    assert_eq!(g(1e6), "1e+06");
    assert_eq!(g(999999.5), "1e+06");
    assert_eq!(g(123456789.0), "1.23457e+08");
    assert_eq!(g(0.0001), "0.0001");
    assert_eq!(g(0.00001), "1e-05");
    assert_eq!(g(0.000123), "0.000123");
    assert_eq!(g(1e-10), "1e-10");
    assert_eq!(g(1e300), "1e+300");
    assert_eq!(g(f64::from(f32::from_bits(1))), "1.4013e-45");
    assert_eq!(g(f64::from(f32::MAX)), "3.40282e+38");
    assert_eq!(g(f64::from(0.1f32)), "0.1");
    assert_eq!(g(f64::NAN), "nan");
    assert_eq!(g(-f64::NAN), "-nan");
    assert_eq!(g(f64::INFINITY), "inf");
    assert_eq!(g(f64::NEG_INFINITY), "-inf");
    // Exact ties round to even, like glibc.
    assert_eq!(g(1234565.0), "1.23456e+06");
    assert_eq!(g(1234575.0), "1.23458e+06");
    assert_eq!(g(0.5), "0.5");
}

#[test]
fn kputd_matches_htslib() {
    assert_eq!(k(0.0), "0");
    assert_eq!(k(-0.0), "-0");
    assert_eq!(k(1.5), "1.5");
    assert_eq!(k(-1.5), "-1.5");
    assert_eq!(k(f64::from(1e-10f32)), "1e-10");
    assert_eq!(k(f64::from(3.5e20f32)), "3.5e+20");
    assert_eq!(k(f64::NAN), "nan");
    assert_eq!(k(f64::NEG_INFINITY), "-inf");
    assert_eq!(k(123456.0), "123456");
    assert_eq!(k(999999.0), "999999");
    assert_eq!(k(0.5), "0.5");
    assert_eq!(k(0.25), "0.25");
    assert_eq!(k(f64::from(0.1f32)), "0.1");
    assert_eq!(k(f64::from(4.56789f32)), "4.56789");
    assert_eq!(k(0.00012345), "0.00012345");
    assert_eq!(k(0.9999996), "1");
    assert_eq!(k(12.5), "12.5");
    assert_eq!(k(f64::from(f32::from_bits(1))), "1.4013e-45");
}

#[test]
fn formats_every_type() {
    let mut a = Vec::new();
    a.extend_from_slice(b"XAAx");
    a.extend_from_slice(b"Xcc\xff");
    a.extend_from_slice(b"XCC\xff");
    a.extend_from_slice(b"Xss\x00\x80");
    a.extend_from_slice(b"XSS\xff\xff");
    a.extend_from_slice(b"Xii\x00\x00\x00\x80");
    a.extend_from_slice(b"XII\xff\xff\xff\xff");
    a.extend_from_slice(b"Xff");
    a.extend_from_slice(&1.5f32.to_le_bytes());
    a.extend_from_slice(b"Xdd");
    a.extend_from_slice(&1e-7f64.to_le_bytes());
    a.extend_from_slice(b"XZZhi\0XHH\0");
    a.extend_from_slice(b"XBBs\x02\0\0\0\xff\xff\x01\x00");
    a.extend_from_slice(b"XbBf\x01\0\0\0");
    a.extend_from_slice(&0.1f32.to_le_bytes());
    a.extend_from_slice(b"XeBI\0\0\0\0");
    assert_eq!(
        fmt(&a).unwrap(),
        "\tXA:A:x\tXc:i:-1\tXC:i:255\tXs:i:-32768\tXS:i:65535\tXi:i:-2147483648\
         \tXI:i:4294967295\tXf:f:1.5\tXd:d:1e-07\tXZ:Z:hi\tXH:H:\tXB:B:s,-1,1\
         \tXb:B:f,0.1\tXe:B:I"
    );
}

#[test]
fn short_tail_is_ignored() {
    assert_eq!(fmt(b"XAAxNM\0").unwrap(), "\tXA:A:x");
}

#[test]
fn corrupt_fields() {
    assert_eq!(fmt(b"XAAxXQQ1234"), Err(4));
    assert_eq!(fmt(b"XZZabc"), Err(0));
    assert_eq!(fmt(b"Xii\x01\x02\x03"), Err(0));
    assert_eq!(fmt(b"XBBA\x01\0\0\0a"), Err(0));
    assert_eq!(fmt(b"XBBi\x02\0\0\0\x01\0\0\0"), Err(0));
    assert_eq!(fmt(b"XBBi\x01\0\0"), Err(0));
    assert_eq!(fmt(b"XddAAAAAAA"), Err(0));
}

#[test]
fn check_agrees_with_format() {
    let cases: [&[u8]; 12] = [
        b"XAAxXQQ1234",
        b"XZZabc",
        b"Xii\x01\x02\x03",
        b"XBBA\x01\0\0\0a",
        b"XBBi\x02\0\0\0\x01\0\0\0",
        b"XBBi\x01\0\0",
        b"XddAAAAAAA",
        b"XAAxXCC\x07XZZab\0NMi\x01\0\0\0",
        b"XBBC\x02\0\0\0\x01\x02XSs\x01\0",
        b"XCC",
        b"XZZ\0XQQ",
        b"",
    ];
    for aux in cases {
        let mut out = Vec::new();
        assert_eq!(check(aux), format(aux, &mut out), "{aux:?}");
    }
    assert_eq!(check(b"XAAxXQQ1234"), Err(4));
}

#[test]
fn find_like_bam_aux_get() {
    let a = b"NMi\x01\0\0\0CGBI\x01\0\0\0\x10\0\0\0";
    assert_eq!(find(a, *b"CG"), Ok(Some(9)));
    assert_eq!(find(a, *b"NM"), Ok(Some(2)));
    assert_eq!(find(a, *b"XX"), Ok(None));
    assert_eq!(find(b"NMQ\x01\0\0\0CGBI", *b"CG"), Err(0));
    assert_eq!(find(b"XZZabc", *b"XZ"), Err(0));
    assert_eq!(find(b"", *b"CG"), Ok(None));
}
