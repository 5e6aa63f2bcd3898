#include "geo.h"

namespace geo {

double Point::norm() const {
    return x * x + y * y;
}

int area(int w, int h) {
    return w * h;
}

}  // namespace geo
