#pragma once
// Every optimizer and learning-rate scheduler (torch.optim).
#include "weft/optim/adagrad.h"
#include "weft/optim/adam.h"
#include "weft/optim/checkpoint.h"
#include "weft/optim/lr_scheduler.h"
#include "weft/optim/optimizer.h"
#include "weft/optim/rmsprop.h"
#include "weft/optim/sgd.h"
