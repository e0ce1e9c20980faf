//! Lock helpers: a poisoned lock (a panic in another thread mid-write) is a backend error,
//! not a panic in the caller.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::error::{Error, Result};

pub(crate) fn read<T>(lock: &RwLock<T>) -> Result<RwLockReadGuard<'_, T>> {
    lock.read()
        .map_err(|_| Error::backend("in-memory store lock poisoned by a panic"))
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> Result<RwLockWriteGuard<'_, T>> {
    lock.write()
        .map_err(|_| Error::backend("in-memory store lock poisoned by a panic"))
}
