//! `swex mcp` driven by the official MCP Python SDK's stdio client (tests/mcp/e2e.py): tools
//! listed and called on a fixture repository, edits seen by the next call, bad input answered
//! with errors while the server goes on. The SDK comes from `scripts/fetch-mcp-client` (run by
//! `scripts/test`, which sets SWEX_MCP_PYTHON and requires the test with
//! SWEX_REQUIRE_MCP_CLIENT=1); without it the test says so and passes (`swex_testkit`'s rule).

use std::process::Command;

#[test]
fn the_official_python_client_drives_the_server() {
    let python = std::env::var("SWEX_MCP_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_sdk = Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|out| out.status.success());
    let found = if has_sdk {
        Ok(())
    } else {
        Err(format!("`{python}` cannot import `mcp.client.stdio`"))
    };
    if swex_testkit::available(swex_testkit::Needs::McpClient, found).is_none() {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/e2e.py");
    let out = Command::new(&python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_swex"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "e2e.py failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
