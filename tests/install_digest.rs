//! Properties of the package digest (`skills-install.package.v1`): independent of the order
//! files arrive in, changed by any byte of any path or content, by adding or removing a file,
//! and by moving bytes between a path and its content or between neighbouring files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use skills::install::PackageFile;
use skills::install::digest::{file_digest, package_digest, parse_digest};

fn files() -> impl Strategy<Value = Vec<PackageFile>> {
    proptest::collection::btree_map(
        "[a-z]{1,6}(/[a-z.]{1,6}){0,2}",
        proptest::collection::vec(any::<u8>(), 0..64),
        1..6,
    )
    .prop_map(|map| {
        map.into_iter()
            .map(|(path, bytes)| PackageFile::new(path, bytes))
            .collect()
    })
}

proptest! {
    #[test]
    fn order_does_not_matter(files in files(), seed in any::<u64>()) {
        let mut shuffled = files.clone();
        // A deterministic shuffle from the seed.
        let len = shuffled.len();
        for i in (1..len).rev() {
            let j = (seed.wrapping_mul(6364136223846793005).wrapping_add(i as u64) % (i as u64 + 1)) as usize;
            shuffled.swap(i, j);
        }
        prop_assert_eq!(package_digest(&files), package_digest(&shuffled));
    }

    #[test]
    fn any_content_byte_change_changes_it(files in files(), which in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(), flip in 1u8..=255) {
        let mut changed = files.clone();
        let file = &mut changed[which.index(files.len())];
        if file.bytes.is_empty() {
            file.bytes.push(flip);
        } else {
            let i = at.index(file.bytes.len());
            file.bytes[i] ^= flip;
        }
        prop_assert_ne!(package_digest(&files), package_digest(&changed));
    }

    #[test]
    fn any_path_change_changes_it(files in files(), which in any::<prop::sample::Index>(), suffix in "[a-z]{1,3}") {
        let mut changed = files.clone();
        let i = which.index(files.len());
        let renamed = format!("{}{}", changed[i].path, suffix);
        prop_assume!(!files.iter().any(|f| f.path == renamed));
        changed[i].path = renamed;
        prop_assert_ne!(package_digest(&files), package_digest(&changed));
    }

    #[test]
    fn adding_or_removing_a_file_changes_it(files in files(), extra in proptest::collection::vec(any::<u8>(), 0..8)) {
        let mut more = files.clone();
        more.push(PackageFile::new("zz-added", extra));
        prop_assert_ne!(package_digest(&files), package_digest(&more));
        if files.len() > 1 {
            prop_assert_ne!(package_digest(&files), package_digest(&files[1..]));
        }
    }

    #[test]
    fn bytes_cannot_move_across_boundaries(path in "[a-z]{2,8}", content in proptest::collection::vec(any::<u8>(), 1..16), cut in any::<prop::sample::Index>()) {
        // Moving the path's tail into the content must not collide.
        let i = cut.index(path.len() - 1) + 1;
        let (head, tail) = path.split_at(i);
        let mut moved = tail.as_bytes().to_vec();
        moved.extend_from_slice(&content);
        prop_assert_ne!(
            package_digest(&[PackageFile::new(path.clone(), content.clone())]),
            package_digest(&[PackageFile::new(head, moved)])
        );
        // Splitting one file's content into two files must not collide either.
        let j = cut.index(content.len());
        let (a, b) = content.split_at(j);
        prop_assert_ne!(
            package_digest(&[PackageFile::new(path.clone(), content.clone())]),
            package_digest(&[PackageFile::new(path.clone(), a.to_vec()), PackageFile::new(format!("{path}x"), b.to_vec())])
        );
    }

    #[test]
    fn digests_have_one_form(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let d = file_digest(&bytes);
        prop_assert_eq!(parse_digest(&d).unwrap(), d.clone());
        prop_assert_eq!(parse_digest(&d.to_uppercase().replacen("SHA256:", "sha256:", 1)).unwrap(), d);
    }
}

#[test]
fn the_digest_is_pinned() {
    // Stored digests depend on this encoding: a change must be deliberate.
    let files = [
        PackageFile::new("SKILL.md", "---\nname: a\ndescription: b\n---\n"),
        PackageFile::new("scripts/run.sh", "echo hi\n"),
    ];
    let first = package_digest(&files);
    assert_eq!(first, package_digest(&[files[1].clone(), files[0].clone()]));
    // Computed independently (Python's hashlib over the documented encoding).
    assert_eq!(
        first,
        "sha256:633668247bfb12ffccbe687112ec4d3262c4b78d1226804e02901f9dc5ef7818"
    );
    assert_eq!(
        file_digest(b"abc"),
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
