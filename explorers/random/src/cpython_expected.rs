// Generated with CPython 3.11.7 (see the tests that use these).
const MT_42: [u32; 3] = [2746317213, 478163327, 107420369];
const MT_0: [u32; 3] = [3626764237, 1654615998, 3255389356];
const MT_2_40: [u32; 3] = [445128065, 1517081360, 2880015531];
const SAMPLE_42_20_10: &[usize] = &[3, 0, 8, 7, 16, 2, 11, 1, 10, 17];
const SAMPLE_42_500_10: &[usize] = &[327, 57, 12, 379, 140, 125, 114, 71, 377, 52];
const SAMPLE_7_3_3: &[usize] = &[1, 0, 2];
const SAMPLE_42_90_6: &[usize] = &[81, 14, 3, 35, 31, 28];
