use thiserror::Error;

/// Why a plan cannot be run. Every variant names the plan field at fault, so the Python
/// side can point the user at the scenario field it came from.
#[derive(Debug, Error)]
pub enum PlanError {
    #[error("plan is not valid JSON for a tcplab plan: {0}")]
    Parse(#[from] serde_json::Error),
    #[error("{field}: {message}")]
    Field { field: String, message: String },
}

impl PlanError {
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Field {
            field: field.into(),
            message: message.into(),
        }
    }
}
