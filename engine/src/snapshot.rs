//! Snapshots: a repository's tree at one commit, materialised from a local git directory.
