"""The OpenHands presets: the summarizing condenser and its masking hybrid."""
