//! Code inside markup: the `<script>` elements of single-file components (Vue's `.vue`, Svelte's
//! `.svelte`), whose code is TypeScript or JavaScript between a template and styles.
//!
//! [`script_only`] keeps the bytes of every `<script>` element's content and blanks everything
//! else (the tags, the template, the styles) to spaces, keeping every line break. The result has
//! the same length, the same byte offsets and the same lines as the file, so the language's
//! analyser parses it as if the file held only its scripts, and every definition, import and
//! reference it finds sits at its true place in the file. A component's several scripts (Vue's
//! `<script>` beside `<script setup>`, Svelte's `context="module"` one) are read as one program.
//!
//! Which files are read so is the language table's to say
//! ([`super::LanguageSpec::markup_extensions`]); this module knows no extension.

/// `text` with everything outside the content of its `<script …>…</script>` elements replaced
/// by spaces, line breaks kept (`\n` and `\r`, so that both line notions stay the same). Tag names
/// match in any case; an element that is never closed runs to the end of the file (as a browser
/// reads it).
pub fn script_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let Some((content_start, content_end, next)) = next_script(bytes, at) else {
            blank_into(&mut out, &bytes[at..]);
            break;
        };
        blank_into(&mut out, &bytes[at..content_start]);
        out.extend_from_slice(&bytes[content_start..content_end]);
        blank_into(&mut out, &bytes[content_end..next]);
        at = next;
    }
    // Only whole UTF-8 sequences were copied (tags are ASCII, so a script's content starts and
    // ends on character boundaries) and every other byte became an ASCII space or line break.
    String::from_utf8(out).expect("script contents are cut at character boundaries")
}

/// The next script element at or after `from`: where its content starts and ends, and where the
/// text after its end tag starts.
fn next_script(bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
    let mut search = from;
    loop {
        let open = search + find_ignore_case(&bytes[search..], b"<script")?;
        let after_name = open + b"<script".len();
        // `<scripts>` or `<script-x>` are other elements.
        match bytes.get(after_name) {
            Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') => {}
            None => return None,
            Some(_) => {
                search = after_name;
                continue;
            }
        }
        let tag_end = after_name + tag_close(&bytes[after_name..])?;
        let content_start = tag_end + 1;
        if bytes[tag_end - 1] == b'/' {
            // `<script src="x.js" />`: no content.
            search = content_start;
            continue;
        }
        return Some(
            match find_ignore_case(&bytes[content_start..], b"</script") {
                Some(len) => {
                    let content_end = content_start + len;
                    let close_end = tag_close(&bytes[content_end..])
                        .map_or(bytes.len(), |i| content_end + i + 1);
                    (content_start, content_end, close_end)
                }
                None => (content_start, bytes.len(), bytes.len()),
            },
        );
    }
}

/// Where the tag starting in `bytes` ends: the index of its `>`, outside quoted attribute values
/// (`<script lang="ts" generic="T extends Record<string, unknown>">`).
fn tag_close(bytes: &[u8]) -> Option<usize> {
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') => quote = Some(b),
            (None, b'>') => return Some(i),
            (None, _) => {}
        }
    }
    None
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

/// Appends `bytes` as spaces, keeping line breaks.
fn blank_into(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend(bytes.iter().map(|&b| match b {
        b'\n' | b'\r' => b,
        _ => b' ',
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per case: the component, and the words the analyser is given. Every byte either
    /// stays where it was or becomes a space; line breaks always stay.
    #[test]
    fn only_the_scripts_content_is_kept_in_place() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("<template><p>x</p></template>", ""),
            (
                "<template>\n  <p>{{ a }}</p>\n</template>\n<script>\nexport default { name: 'A' }\n</script>\n<style>p{}</style>",
                "export default { name: 'A' }",
            ),
            (
                "<script lang=\"ts\" generic=\"T extends Record<string, unknown>\">let a: T</script>",
                "let a: T",
            ),
            // Vue's two scripts, Svelte's module script, any case; a self-closed one has none.
            (
                "<SCRIPT setup>a()</SCRIPT><script context=\"module\">b()</script ><script src=\"x.js\"/>c",
                "a() b()",
            ),
            // Not script elements: `<scripts>`, `<script-x>`.
            ("<scripts>a</scripts><script-x>b</script-x>", ""),
            // Never closed: the content runs to the end of the file.
            ("<p>x</p><script>\nlet a = 1\n", "let a = 1"),
            ("<script", ""),
            // Multi-byte characters outside are blanked byte by byte.
            ("é\r\n<script>ü</script>\rß", "ü"),
        ];
        for (component, expected) in cases {
            let got = script_only(component);
            assert_eq!(got.len(), component.len(), "{component:?}: length");
            for (g, c) in got.bytes().zip(component.bytes()) {
                assert!(g == c || g == b' ', "{component:?} became {got:?}");
                if matches!(c, b'\n' | b'\r') {
                    assert_eq!(g, c, "{component:?}: a line break is kept");
                }
            }
            assert_eq!(
                got.split_whitespace().collect::<Vec<_>>().join(" "),
                *expected,
                "{component:?}"
            );
        }
    }

    /// Tags cut anywhere, next to multi-byte characters: the result always has the text's
    /// length and line breaks (a panic here would reach the analyser, which would fall back to
    /// line windows and hide it).
    #[test]
    fn any_text_keeps_its_length_and_lines() {
        const PIECES: &[&str] = &[
            "<script>",
            "<script lang=\"ts\">",
            "<SCRIPT x='>'>",
            "<script/>",
            "</script>",
            "</SCRIPT >",
            "<script",
            "</script",
            "<template>",
            "é",
            "日本",
            "\n",
            "\r",
            ">",
            "\"",
            "'",
            "let a = 1;",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..2_000 {
            let text: String = (0..below(24))
                .map(|_| PIECES[below(PIECES.len())])
                .collect();
            let got = script_only(&text);
            assert_eq!(got.len(), text.len(), "{text:?}");
            let breaks = |t: &str| {
                t.char_indices()
                    .filter(|(_, c)| matches!(c, '\n' | '\r'))
                    .map(|(i, _)| i)
                    .collect::<Vec<_>>()
            };
            assert_eq!(breaks(&got), breaks(&text), "{text:?}");
        }
    }
}
