pub const SECRET_KEY: &str = "RustHunter2-Secret-Value";
pub fn key() -> &'static str { SECRET_KEY }
