#pragma once
// Datasets, collation, DataLoader and the IDX/MNIST readers (torch.utils.data).
#include "weft/data/collate.h"
#include "weft/data/dataloader.h"
#include "weft/data/dataset.h"
#include "weft/data/idx.h"
#include "weft/data/mnist.h"
