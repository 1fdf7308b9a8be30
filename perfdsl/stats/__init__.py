"""Pure statistics: numpy and scipy in, frozen records out; no bundle, evaluation or report."""
