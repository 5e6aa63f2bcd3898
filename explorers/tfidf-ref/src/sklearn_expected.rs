// Generated with scikit-learn TfidfVectorizer + cosine_similarity; scores: [0.5754319532668313, 0.0, 0.0, 0.0, 0.6299363482955619, 0.0, 0.0]
const SKLEARN_DOCS: &[&str] = &["def parse_url(self, url):\n    return urlparse(url).netloc", "class UrlParser:\n    def parse(self, text): return text.split('/')", "import os\nos.path.join(base, url) # joins url parts", "README: the url parser handles http and https urls", "def netloc(url): return parse_url(url)", "unrelated content about database migrations and tables", "tables tables tables database"];
const SKLEARN_QUERY: &str = "parse_url returns the wrong netloc for https urls with a port";
const SKLEARN_MAX_FEATURES: usize = 10; // of 30 terms
const SKLEARN_BITS: [u64; 7] = [4603358249805895572, 0, 0, 0, 4603849181752178463, 0, 0];
