//! An embedded durable store on SQLite (work in progress).
