// Placeholder (issue 5, gpu backend).
