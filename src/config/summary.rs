pub fn check_summary(_c: &super::Config) -> String {
    String::new()
}
