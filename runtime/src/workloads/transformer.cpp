// `--model transformer`: a GPT-style decoder on synthetic token sequences.
//
// Pre-LayerNorm blocks (causal self-attention, then a 4x GELU MLP, each with a residual), learned
// position embeddings, and a language-model head predicting the next token. The data are
// arithmetic sequences t_k = (start + step * k) mod vocab with (start, step) drawn from
// (seed, sample index): the next token is predictable from context, so the loss falls.
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/utils.h>

#include <cmath>
#include <limits>

#include "../workload.hpp"

namespace ddpsim::runtime {
namespace {

constexpr std::uint64_t kTokenStream = 3;
constexpr std::int64_t kMaxStep = 7;

struct CausalSelfAttentionImpl : torch::nn::Module {
  CausalSelfAttentionImpl(std::int64_t d_model, std::int64_t heads)
      : heads(heads),
        qkv(register_module("qkv", torch::nn::Linear(d_model, 3 * d_model))),
        proj(register_module("proj", torch::nn::Linear(d_model, d_model))) {}

  torch::Tensor forward(const torch::Tensor& x) {
    const auto batch = x.size(0), len = x.size(1), d_model = x.size(2);
    const auto head_dim = d_model / heads;
    // [B, L, 3, H, Dh] -> three [B, H, L, Dh]
    auto parts = qkv(x).view({batch, len, 3, heads, head_dim}).permute({2, 0, 3, 1, 4});
    auto q = parts[0], k = parts[1], v = parts[2];
    auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(head_dim));
    auto future = torch::ones({len, len}, x.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    auto mixed = torch::matmul(torch::softmax(scores, -1), v);  // [B, H, L, Dh]
    return proj(mixed.transpose(1, 2).reshape({batch, len, d_model}));
  }

  std::int64_t heads;
  torch::nn::Linear qkv;
  torch::nn::Linear proj;
};
TORCH_MODULE(CausalSelfAttention);

struct DecoderBlockImpl : torch::nn::Module {
  DecoderBlockImpl(std::int64_t d_model, std::int64_t heads)
      : ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})))),
        attn(register_module("attn", CausalSelfAttention(d_model, heads))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})))),
        fc(register_module("fc", torch::nn::Linear(d_model, 4 * d_model))),
        out(register_module("out", torch::nn::Linear(4 * d_model, d_model))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(ln1(x));
    return x + out(torch::gelu(fc(ln2(x))));
  }

  torch::nn::LayerNorm ln1;
  CausalSelfAttention attn;
  torch::nn::LayerNorm ln2;
  torch::nn::Linear fc;
  torch::nn::Linear out;
};
TORCH_MODULE(DecoderBlock);

struct GptImpl : torch::nn::Module {
  GptImpl(const TrainOptions& o)
      : token_embedding(register_module("tok_emb", torch::nn::Embedding(o.vocab, o.d_model))),
        position_embedding(
            register_module("pos_emb", torch::nn::Embedding(o.seq_len, o.d_model))),
        final_norm(nullptr),
        head(nullptr) {
    for (std::int64_t i = 0; i < o.layers; ++i) {
      blocks.push_back(
          register_module("block" + std::to_string(i), DecoderBlock(o.d_model, o.heads)));
    }
    final_norm = register_module("ln_f",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
    head = register_module("head",
                           torch::nn::Linear(torch::nn::LinearOptions(o.d_model, o.vocab).bias(false)));
  }

  torch::Tensor forward(const torch::Tensor& tokens) {  // [B, L] -> logits [B, L, vocab]
    auto positions = torch::arange(tokens.size(1), tokens.options());
    auto x = token_embedding(tokens) + position_embedding(positions);
    for (auto& block : blocks) x = block(x);
    return head(final_norm(x));
  }

  torch::nn::Embedding token_embedding;
  torch::nn::Embedding position_embedding;
  std::vector<DecoderBlock> blocks;
  torch::nn::LayerNorm final_norm;
  torch::nn::Linear head;
};
TORCH_MODULE(Gpt);

class TransformerWorkload final : public Workload {
 public:
  explicit TransformerWorkload(const TrainOptions& o) : o_(o) {
    torch::manual_seed(o.seed);
    net_ = Gpt(o);
  }

  std::shared_ptr<torch::nn::Module> module() override { return net_.ptr(); }
  std::int64_t dataset_size() const override { return o_.dataset_size; }

  Batch batch(const std::vector<std::int64_t>& indices) override {
    const auto n = static_cast<std::int64_t>(indices.size());
    auto k = torch::arange(o_.seq_len + 1, torch::kLong);
    auto sequences = torch::empty({n, o_.seq_len + 1}, torch::kLong);
    for (std::int64_t row = 0; row < n; ++row) {
      at::Generator gen = sample_generator(o_.seed, kTokenStream, indices[row]);
      const auto start = torch::randint(o_.vocab, {1}, gen, torch::kLong);
      const auto step = torch::randint(1, kMaxStep + 1, {1}, gen, torch::kLong);
      sequences[row] = (start + step * k).remainder(o_.vocab);
    }
    using torch::indexing::Slice;
    return {sequences.index({Slice(), Slice(0, o_.seq_len)}),
            sequences.index({Slice(), Slice(1, o_.seq_len + 1)})};
  }

  torch::Tensor loss(const Batch& batch) override {
    auto logits = net_->forward(batch.input);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, o_.vocab}),
                                                batch.target.reshape({-1}));
  }

 private:
  TrainOptions o_;
  Gpt net_{nullptr};
};

}  // namespace

std::unique_ptr<Workload> make_transformer_workload(const TrainOptions& options) {
  return std::make_unique<TransformerWorkload>(options);
}

}  // namespace ddpsim::runtime
